"""The domain artifact: its data model (spec.py), the DB-layer compiler (db_layer.py), and one folder per synthesized domain."""
