"""MT and spans: raters of MQM / ESA judgments (raters) and predicted error spans against the human
ones (span-eval).
"""
