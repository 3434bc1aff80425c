// Being written (issue 6).
