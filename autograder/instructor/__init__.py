"""The instructor's tools: grading a class (:mod:`.grade`, :mod:`.collect`, :mod:`.store`, :mod:`.report`),
packaging the course (:mod:`.gradescope`, :mod:`.nbgrader_build`, :mod:`.release`) and generating its files from
course.yml and solutions/ (:mod:`.generate`, :mod:`.notebooks`, :mod:`.catalogue`). None of it ships to students.
"""
