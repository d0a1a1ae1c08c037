"""Fewer human labels: prediction-powered estimates from a metric plus a few human labels (ppi) and the
planner of the next study (plan).
"""
