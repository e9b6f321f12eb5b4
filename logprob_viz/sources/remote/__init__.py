"""Remote runners behind `lv.connect`: the same generate / stream / score on a model behind a server.

    openai.py    `connect` and the OpenAI-compatible runner (vLLM first)
    llamacpp.py  llama.cpp's llama-server through its native /completion
    http.py      JSON requests, SSE streams and error bodies, standard library only
"""
