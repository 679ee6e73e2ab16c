from strongsolve.cli import run

run()
