# Attention = kernel regression: the Streamlit app, CPU only, offline at run time.
#   docker build -t attention-lesson .   (the name deploy/compose.yaml and deploy/k8s run)
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# CPU-only torch from PyTorch's CPU index (the default index would pull a multi-GB CUDA build).
COPY requirements.txt .
RUN pip install --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt \
    && useradd --create-home --uid 1000 learner
COPY --chown=1000:1000 . .
USER 1000
# The live sliders' charts load the plotly wheel's plotly.min.js from the app's own static files
# (ui/house_chart.py copies it under static/vendor on first use; done here so the image needs no
# write at run time).
RUN python -c "from ui.house_chart import plotly_js_name; print(plotly_js_name())"

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=4).status == 200 else 1)"]

CMD ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501"]
