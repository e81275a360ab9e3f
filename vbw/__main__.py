from vbw.cli import main

main()
