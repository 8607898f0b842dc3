"""The command line of cqlcodec: ``python -m cqlcodec COMMAND`` (also installed as the
``cqlcodec`` script).

Value commands (:mod:`cqlcodec.cli.codec_commands`): ``encode``, ``decode``,
``decode-result``, ``bench``, ``demo``. Table commands against a live cluster
(:mod:`cqlcodec.cli.table_commands`, need a driver and pyarrow): ``unload``, ``load``,
``count``, and ``copy`` (:mod:`cqlcodec.cli.copy_command`). :func:`cqlcodec.cli.main.main`
is the entry point; the exit statuses are listed in :mod:`cqlcodec.cli.exits`. Nothing
here is compiled.
"""
