// The bare Fastify route the HTTP figures are measured against: answers 302 with a Location, nothing else.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/bare', async (_request, reply) =>
  reply.code(302).header('location', '/files/0123456789abcdef0123456789abcdef.png').send(),
);
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${url}\n`);
