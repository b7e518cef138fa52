"""The test suite; its folders mirror the quizsvc package."""
