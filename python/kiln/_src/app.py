"""tf.app: run(main) parses the command line's flags (kiln.flags) and calls main(argv)."""
import sys

from kiln._src import flags


def run(main=None, argv=None):
    """Parses the flags of argv (default sys.argv), then sys.exit(main(remaining argv))."""
    args = sys.argv if argv is None else argv
    try:
        rest = flags.FLAGS(args)
    except flags.Error as e:
        sys.stderr.write("kiln: %s\n" % e)
        sys.exit(2)
    main = main or sys.modules["__main__"].main
    sys.exit(main(rest))
