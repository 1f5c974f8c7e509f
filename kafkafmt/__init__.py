"""kafkafmt: Apache Kafka's message formats and log, byte for byte."""
__version__ = "0.1.0"
