"""Options of the pytest-benchmark suites (run them with `python -m pytest benchmarks/suites`; they are
outside the test paths, so the test suite never runs them)."""


def pytest_addoption(parser):
    group = parser.getgroup("poot suites")
    group.addoption("--presets", default="tiny", help="poot.models presets, comma separated (on a GPU: "
                    "qwen2.5-0.5b, llama-3.2-1b, llama-3-8b)")
    group.addoption("--contexts", default="128,1024,4096", help="KV contexts, comma separated")
    group.addoption("--devices", default="cpu", help="poot devices, comma separated (cpu, cuda, wgpu, vulkan)")


def pytest_generate_tests(metafunc):
    opts = metafunc.config.option
    for name, values in (("preset", opts.presets), ("context", opts.contexts), ("device", opts.devices)):
        if name in metafunc.fixturenames:
            items = [v.strip() for v in values.split(",") if v.strip()]
            metafunc.parametrize(name, [int(v) for v in items] if name == "context" else items)
