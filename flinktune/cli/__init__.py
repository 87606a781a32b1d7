"""The command line: the only package that imports typer. Engines are imported lazily inside
commands so that ``flinktune lint`` never pays for numpy or pyspark."""
