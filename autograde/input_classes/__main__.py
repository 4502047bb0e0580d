import sys

from autograde.input_classes import main

sys.exit(main(sys.argv[1:]))
