"""The lab: a local web app over whatever is solved in a results folder.

Modules
-------
app      the Flask application, the page layout and the home page (what is solved, what is not and
         the command that solves it)
g2048    2048: a board entered by clicking cells, each move's value, a game with hints
shutbox  Shut the Box: open tiles and a roll -> each choice's value and the best
ludo     Ludo races: a position and a roll -> each piece's win probability and the best
truco    Truco atlas: score, dealer, vira -> the subgame, the grid of 1296, a hand's mix
inputs   numbers typed into the forms, read as ASCII numbers within a range

Every page reads results only through the loaders the CLI uses, so its numbers are the CLI's, and
never writes to the results folder.
"""
