"""The resident service: one process per user serving every docs root it is asked about."""
