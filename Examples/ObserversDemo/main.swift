// Being written (issue 5).
