// A gRPC client for the tests, built on @grpc/grpc-js and @grpc/proto-loader from npm
// (nobody here wrote them): it loads tools/infer-serve/grpc_inference.proto at run time
// and makes one call.
//
//   node grpc_client.mjs NPM_DIR PROTO HOST:PORT METHOD  < request.json
//
// The request is the message as JSON (proto field names); bytes fields are base64
// strings. Prints one JSON line: {"response": {...}} with bytes as base64 and int64 as
// strings, or {"error": {"code": N, "details": "..."}}.
import { createRequire } from 'node:module';
import path from 'node:path';

const [npmDir, protoPath, address, method] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(npmDir), 'node_modules', 'x.js'));
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const definition = protoLoader.loadSync(protoPath, {keepCase: true, longs: String, enums: String, defaults: true,
                                                    oneofs: true});
const inference = grpc.loadPackageDefinition(definition).inference;
const client = new inference.GRPCInferenceService(address, grpc.credentials.createInsecure(),
                                                  {'grpc.max_receive_message_length': 64 << 20,
                                                   'grpc.max_send_message_length': 64 << 20});

let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const request = input.trim() ? JSON.parse(input) : {};
  if (request.raw_input_contents) {
    request.raw_input_contents = request.raw_input_contents.map((b) => Buffer.from(b, 'base64'));
  }
  const deadline = new Date(Date.now() + 30000);
  client[method](request, {deadline}, (error, response) => {
    if (error) {
      console.log(JSON.stringify({error: {code: error.code, details: error.details}}));
    } else {
      console.log(JSON.stringify({response}, (key, value) => {
        if (value && value.type === 'Buffer' && Array.isArray(value.data)) return Buffer.from(value.data).toString('base64');
        return value;
      }));
    }
    client.close();
  });
});
