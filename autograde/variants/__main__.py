import sys

from autograde.variants import main

sys.exit(main(sys.argv[1:]))
