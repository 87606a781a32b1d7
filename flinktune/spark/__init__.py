"""The Spark session and its JVM: tuned start-up, the class-data archive, and stopping what was started.

Kept apart from ``flinktune.analysis`` (the DataFrame transforms and the job entry) so that the
detached archive builder (``python -m flinktune.spark.class_cache``) starts without importing the
analysis, numpy or pyspark. Imports nothing at package level.
"""
