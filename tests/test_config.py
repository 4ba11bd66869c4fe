

def test_settings_wire_form_round_trips(tmp_path):
    """A client hands its resolved settings to the resident service as JSON: every field survives."""
    import json

    from markdown_memory.config import Settings

    settings = Settings(docs_root=tmp_path, db_path=tmp_path / "x.db", embedder="minilm", embedder_named=False,
                        threads=2, exclude=["drafts/**"], auto_index=False, max_file_bytes=1234)
    assert Settings.from_wire(json.loads(json.dumps(settings.to_wire()))) == settings


def test_settings_wire_form_refuses_unknown_embedder(tmp_path):
    import pytest

    from markdown_memory.config import Settings
    from markdown_memory.errors import ConfigError

    data = Settings(docs_root=tmp_path, db_path=tmp_path / "x.db").to_wire()
    data["embedder"] = "gpt-9"
    with pytest.raises(ConfigError):
        Settings.from_wire(data)
