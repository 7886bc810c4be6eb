"""The crisis screen on real people's messages: public collections read from a local copy, the
annotation batches, and the report (``python -m scripts.safety.real``; docs/safety-realdata.md)."""
