"""The CorpusView (js/corpus/): a table of many traces over one LogprobView of the selected one.

    view.py           `CorpusView`, its table widget and offline page
    payload.py        the table's payload: columns, sparklines, the surprise index
    string_ranks.py   dense ranks of Arrow strings for the table's sorts (payload.py's alone)
    window.py         a large corpus's rows sorted and filtered in the kernel, sent a window at a time
"""
