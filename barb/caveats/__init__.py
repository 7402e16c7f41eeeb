"""The warning checks: what a result includes that the person would not expect, said as
warning sentences beside its numbers (a holiday's short session among the days ranked, a
yardstick that holds the bar it measures, groups that differ by no more than noise).

Each module is one kind of warning; the engine calls them, and none of them calls the
engine back (``tests/test_import_graph.py`` checks it): a check reads a stage's answer as
``barb.stage_output`` holds it, and one that runs a stage again (cut_bar_rows,
running_history) is handed the engine's run by the interpreter. This file imports nothing,
so importing a check never pulls in the others.

Called by the interpreter (``barb.interpreter``), once a query has run:
    bounded_conditions, calendar, channels, cut_bar_rows, early_close_bars, early_close_clocks,
    full_days, gap_sizes, holiday_closes, lookback, open_runs, open_units, part_day_picks,
    part_group_feeds, price_level_comparisons, price_levels, ranked_groups, running_history,
    scope (the period's edges, a join, an unfinished week or year, a named session's hours),
    sessions, short_bar_picks, short_day_groups, short_session_groups, short_sessions,
    short_weeks, then_history, then_row_order, weekday_neighbours, yardsticks, zone_midnight,
    zone_window_groups, zones.
Called by a stage (``barb.stages``), as it keeps, groups and cuts its rows:
    data_start, filled_means, group_noise, groups, limits, lookahead, no_edge,
    overlapping_windows, same_run_rows, sample_sizes, setup_noise.
Called only by other checks here:
    empty_rows (sample_sizes, data_start, calendar), events (scope), release_times (events).
Built once per run by the interpreter and handed to the checks that read it:
    kept_days (the kept daily rows' dates and short sessions: short_session_groups,
    short_sessions).
The planner's own warnings, read from the query before any bars, are in
``barb.plan_warnings``, below the planner.
"""
