"""Dataset sources and shared preprocessing: records, download/mirror, tensor cache, windowing."""
