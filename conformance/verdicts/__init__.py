"""The verdict vocabulary, beneath everything else of the suite: requirements as data
(``requirements``), the results every report is fed from and the verdict exceptions a check raises
(``results``), findings keyed stably across runs (``findings``), and the expected-failures
baseline that judges a result against what a vendor declared (``baseline``)."""
