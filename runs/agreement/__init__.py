"""Agreement without a reference: metrics with each other by score range (agreement; Bhandari et al.
2020) and annotators with each other (annotators; the human ceiling).
"""
