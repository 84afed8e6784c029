"""The files every part reads and writes: LoadGen's detail log, accuracy.txt, run.json and the run modes.

The bottom layer: check, harness, evaluation, stage and report import these, and these import none of them.
"""
