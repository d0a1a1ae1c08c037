"""Systems compared under one measure: significance tests between every pair of systems (system-tests;
Graham 2015) and how their ranking changes between measures (rank-change).
"""
