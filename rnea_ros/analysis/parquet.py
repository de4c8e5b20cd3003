"""OUT/samples.parquet: the same columns as samples.csv, as float64, one row group per chunk.

pyarrow is an optional extra (``pip install pyarrow``): imported only when Parquet is asked
for. Readable by pandas (``pd.read_parquet``) and polars (``pl.read_parquet``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


class ParquetSamples:
    def __init__(self, path: Path, columns: list[str]) -> None:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as error:
            raise ImportError("Parquet output needs pyarrow: pip install pyarrow") from error
        self._pa = pa
        self.columns = columns
        schema = pa.schema([(name, pa.float64()) for name in columns])
        # byte-stream split: floats of slowly varying signals compress well once their bytes are grouped
        self._writer = pq.ParquetWriter(str(path), schema, compression="zstd", use_byte_stream_split=True)

    def write(self, rows: np.ndarray) -> None:
        arrays = [self._pa.array(np.ascontiguousarray(rows[:, k])) for k in range(rows.shape[1])]
        self._writer.write_table(self._pa.Table.from_arrays(arrays, names=self.columns))

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> ParquetSamples:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
