from quizsvc.cli import main

main()
