"""The spec: YAML with locations and `extends:` (`source.py`), the spec model (`schema.py`,
`sections.py`, `search.py`), the files a spec names (`files.py`), validation with located
messages (`validate.py`) and the hash that names a configuration across seeds (`identity.py`)."""
