"""kiln.compat.v1 is kiln."""
import sys

import kiln as _kiln

sys.modules[__name__] = _kiln
