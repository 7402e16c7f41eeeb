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

# Its early closes of 2024 (13:00 ET): the day before Independence Day, the day after
# Thanksgiving and Christmas Eve.
NYSE_EARLY_CLOSES_2024 = ("2024-07-03", "2024-11-29", "2024-12-24")
