"""Factual-consistency protocol: metrics as detectors on binary labels (detection) and error categories
of a human judgment (categories).
"""
