from submitter.cli import main

main()
