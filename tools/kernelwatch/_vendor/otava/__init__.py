# Apache Otava 0.8.0's analysis module, vendored: see ../README.md.
