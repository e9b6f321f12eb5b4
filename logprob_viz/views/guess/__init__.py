"""The guessing game (js/guess/): ``lv.guess(text)``, guess the next token, then see the model's.

    game.py      `guess` and `GuessGame`, the widget and its payload
    scoring.py   how a guess is matched, a game's score (mean log2 guesses), Shannon's bounds
    chart.py     the class's guesses beside the model's ranks (``game.chart()``)
"""
