"""Named units, so that no formula carries a bare 1e9 or 3600 (docs/README.md section 2).

Sizes in bytes, rates in per second, counts as plain numbers: multiply a figure in the named unit by the
constant to get the base unit (``mem_gib * GiB`` bytes), divide to go back.
"""

GiB = 2**30            # bytes in a gibibyte (card memory, weights, cache)
GB = 1e9               # bytes in a gigabyte (interconnect bandwidth per second)
TB = 1e12              # bytes in a terabyte (memory bandwidth per second)
TERA = 1e12            # FLOP in a TFLOP (dense peaks per second)
BILLION = 1e9          # parameters in a billion
MILLION = 1e6          # tokens in a million (prices and costs per 1M tokens)
MS_PER_S = 1e3         # milliseconds in a second (times are computed in seconds and shown in ms)
US = 1e-6              # seconds in a microsecond
SECONDS_PER_HOUR = 3600
HOURS_PER_DAY = 24
SECONDS_PER_DAY = SECONDS_PER_HOUR * HOURS_PER_DAY
