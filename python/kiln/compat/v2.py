"""kiln.compat.v2 is kiln (graph mode: the names scripts take from v2)."""
import sys

import kiln as _kiln

sys.modules[__name__] = _kiln
