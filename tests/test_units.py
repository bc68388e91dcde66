"""calc.units: the named units every formula reads (a wrong power of ten here would move every figure)."""

from calc import units


def test_the_units_are_the_si_and_calendar_ones():
    assert (units.GB, units.TB, units.TERA, units.BILLION, units.MILLION) == (1e9, 1e12, 1e12, 1e9, 1e6)
    assert units.MS_PER_S == 1e3 and units.US == 1e-6
    assert units.SECONDS_PER_HOUR == 3600 and units.HOURS_PER_DAY == 24 and units.SECONDS_PER_DAY == 86_400


def test_a_terabyte_a_second_moves_a_gigabyte_in_a_millisecond():
    assert units.GB / units.TB * units.MS_PER_S == 1.0
