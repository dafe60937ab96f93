import dagster as dg


def test_definitions_load_and_validate():
    from livesearch_pipeline.definitions import defs

    dg.Definitions.validate_loadable(defs)
    assert defs.get_repository_def() is not None


def test_cli_parser_builds():
    from livesearch_pipeline.cli import build_parser

    parser = build_parser()
    assert "run" in parser._subparsers._group_actions[0].choices
