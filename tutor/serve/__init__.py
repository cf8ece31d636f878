"""`gpu-tutor serve`: the app, unchanged, in each learner's browser (through textual-serve).

room.py is the server: the room's token, one data folder per browser, one app process per browser
session; session.py is what each of those processes runs. Nothing here imports numba, and the
engine never imports this package.
"""
