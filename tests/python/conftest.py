# pytester runs the plugin's own tests in a folder of their own (test_plugin.py).
pytest_plugins = ["pytester"]
