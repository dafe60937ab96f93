"""The benchmark's public static site (`data/site/`): the board of the latest day, each agent's
history, every day's served questions and every question's gold over time, downloads and the
methodology, built from the frozen files and never handing out a live answer (`liverule`)."""
