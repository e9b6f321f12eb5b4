"""The browser suite (real JupyterLab + chromium); a package so its helpers import as `browser.lab` etc."""
