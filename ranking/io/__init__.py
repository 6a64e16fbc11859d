"""Battle logs in and out of arrays: the only part of ``ranking`` that touches files and
pandas.

``ingest`` reads CSV, JSON Lines and Parquet logs (docs/SPEC.md section 1), by columns
with pyarrow (``columnar``) where every record is valid, else by rows; ``records``
normalises raw records and their field aliases into columns; ``validation`` checks each
row and builds the canonical battle frame, naming the row, field and value of every
error; ``frames`` turns a battle frame into the arrays every maths module of ``ranking``
works on (:class:`ranking.types.PairwiseData`, user codes), and filters segments on label
columns. The maths modules import none of this, nor pandas: ``make lint`` checks it.
"""
