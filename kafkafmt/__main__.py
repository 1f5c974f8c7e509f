"""``python -m kafkafmt``: the command line (:func:`kafkafmt.cli.main`)."""
import sys

from .cli import main

if __name__ == "__main__":  # importing the module (a documentation tool walking the package) runs nothing
    sys.exit(main())
