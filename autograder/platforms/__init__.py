"""Where results go: every rendering and every platform. They adapt a result; they never decide a score.

Owns: ``report`` (the terminal table, Markdown feedback, grades.csv, JUnit XML, the CI job
summary), ``classreport`` (summary.json and report.html of a class), ``ci`` (grading a
submission or a class folder into those files: resumable, parallel, sharded), ``shards``
(slices of a class and their merge), ``gradescope`` (the autograder zip and its
results.json), ``github`` (Classroom 50 and plain GitHub: templates, Classroom 50's
config, the instructor's workflow), ``collect`` (a class's submissions from GitHub, at the times
GitHub recorded), ``deadlines`` (the late policy), ``lms`` (Canvas, Moodle and Classroom 50
exports), ``nbgrade``,
``nbgrader_plugin`` and ``nbkernel`` (nbgrader: grade cells, the trusted autograde, the
sandboxed kernel), ``sanitize`` (a student's notebook made inert before any page shows it).
``templates/`` holds the masters of the files those platforms get
(setup.sh, run_autograder, workflows, schemas).

May import: ``grading``, ``sandbox``, ``authoring`` (the release a platform hands out),
``autograder.paths``. Never the CLI. Scores, part totals and the max score are read from
the result, never added up again here.
"""
