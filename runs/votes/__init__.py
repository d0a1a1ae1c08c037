"""Judges and votes: automatic pairwise judges against the humans (judges, judge-diagnostics, judge-
leaderboard, evaluate --preferences) and leaderboards from votes (leaderboard with its style
control, lc-winrate).
"""
