"""The US stock market's weekday holidays of 2024, from NYSE's published list: the
independent side of tests about holiday sessions (Barb's own calendar is what they check)."""

NYSE_HOLIDAYS_2024 = (
    "2024-01-01",
    "2024-01-15",
    "2024-02-19",
    "2024-03-29",
    "2024-05-27",
    "2024-06-19",
    "2024-07-04",
    "2024-09-02",
    "2024-11-28",
    "2024-12-25",
)
