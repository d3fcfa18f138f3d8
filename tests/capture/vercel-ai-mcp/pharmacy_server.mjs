/**
 * The pharmacy counter's tools on an MCP server of their own process (`@modelcontextprotocol/sdk` `McpServer` over
 * stdio), started by the capture script's MCP client. Each call a tool really ran is appended, as one JSON line
 * {name, arguments, result, error}, to the file CAPTURE_TOOL_LOG: the ground truth of what the tools received and
 * returned. A tool that throws is answered to the client as an `isError` result, the SDK's way.
 */
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const PRESCRIPTIONS = {
  'RX-204': 'amoxicillin 500 mg, 2 refills left',
  'RX-310': 'salbutamol inhaler, no refills left',
};
const HOURS = { 'Elm Street': '08:00-20:00', Harbour: '09:00-17:30' };

const TOOLS = {
  find_prescription: ['A prescription on file: the medicine and the refills left.', { rx_id: z.string() },
    (a) => `${a.rx_id}: ${PRESCRIPTIONS[a.rx_id]}`],
  order_refill: ['Order a refill of a prescription for pickup at a branch.', { rx_id: z.string(), branch: z.string() },
    (a) => `refill of ${a.rx_id} ready at the ${a.branch} branch on Friday, order RF-3310`],
  bill_insurer: ['Bill the patient\'s health insurer for a prescription.', { rx_id: z.string() },
    () => { throw new Error('insurer gateway timed out'); }],
  branch_hours: ['Opening hours of a pharmacy branch today.', { branch: z.string() },
    (a) => `${a.branch}: open ${HOURS[a.branch]}`],
  delete_account: ['Delete a patient\'s account.', { user_id: z.string() },
    (a) => `account ${a.user_id} deleted`],
};

const server = new McpServer({ name: 'pharmacy-tools', version: '1.0.0' });
for (const [name, [description, inputSchema, fn]] of Object.entries(TOOLS)) {
  server.registerTool(name, { description, inputSchema }, async (args) => {
    const entry = { name, arguments: args, result: null, error: false };
    try {
      entry.result = fn(args);
    } catch (err) {
      entry.error = true;
      throw err;
    } finally {
      appendFileSync(process.env.CAPTURE_TOOL_LOG, `${JSON.stringify(entry)}\n`);
    }
    return { content: [{ type: 'text', text: entry.result }] };
  });
}
await server.connect(new StdioServerTransport());
