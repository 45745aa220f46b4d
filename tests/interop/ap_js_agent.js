// A minimal agent on the Agent Protocol JavaScript SDK (npm agent-protocol 1.0.5), for the interop test.
//
// Run with node, the SDK resolved through NODE_PATH (tests/interop/peers.py installs it once into
// .peers/): `NODE_PATH=.peers/npm-agent-protocol-1.0.5/node_modules node ap_js_agent.js PORT`.
//
// The agent follows the SDK's README: the task handler returns a step handler, and each call of the
// step handler completes one step. A task's first step plans; the second and every later one is
// the last, and writes output.txt into the task's folder of the workspace, returned as an
// agent-created artifact (the SDK adds a step's artifacts to its task). The SDK's `start()` listens
// on every interface; this script builds the SDK's own Express app and listens on 127.0.0.1 only.
'use strict'

const fs = require('fs')
const path = require('path')
const sdk = require('agent-protocol')

const Agent = sdk.default
const OUTPUT = 'output.txt'
const workspace = process.env.AGENT_WORKSPACE || path.resolve('workspace')

async function taskHandler (taskId, taskInput) {
  let done = 0
  return async function stepHandler (stepInput) {
    done += 1
    if (done === 1) {
      return { name: 'plan', output: `planning: ${taskInput ?? ''}`, is_last: false }
    }
    const folder = path.join(workspace, taskId)
    fs.mkdirSync(folder, { recursive: true })
    fs.writeFileSync(path.join(folder, OUTPUT), 'Washington')
    const artifact = {
      artifact_id: sdk.v4(),
      agent_created: true,
      file_name: OUTPUT,
      relative_path: null,
      created_at: Date.now().toString()
    }
    return { name: 'write output', output: `wrote ${OUTPUT}`, is_last: true, artifacts: [artifact] }
  }
}

const port = Number(process.argv[2])
const app = Agent.handleTask(taskHandler, { workspace, port }).build()
const server = app.listen(port, '127.0.0.1')
// stopped by its PID: close on SIGTERM like a well-behaved server
process.on('SIGTERM', () => server.close(() => process.exit(0)))
